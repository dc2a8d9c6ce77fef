"""Producer fidelity: witnesses that read native inputs, and checks that hold a stream to them."""
