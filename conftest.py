"""Root conftest: makes the suite's pytest plugin available from a checkout.

When the project is installed, the plugin is also registered through the
``pytest11`` entry point under the same name, so it is loaded once either way.
"""

pytest_plugins: list[str] = []
