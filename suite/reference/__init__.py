"""The reference implementation: validator, reader and producer, with their command lines.

Nothing here imports pytest or the harness: the reference is the oracle the harness
judges others by, and it must run on its own.
"""
