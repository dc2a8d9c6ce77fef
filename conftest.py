"""Project-wide test settings for the checkout.

The suite's pytest plugin (options such as --implementation, markers, the
conformance fixtures) is registered by the ``pytest11`` entry point when the
project is installed (``pip install -e .``); it is not repeated here, so that
a run from another folder that points into this checkout loads it once.
"""

from hypothesis import HealthCheck, settings

# The project's own property tests: reproducible in CI, no wall-clock deadline
# (process start-up times vary on shared machines).
settings.register_profile(
    "project", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("project")
