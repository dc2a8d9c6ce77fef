"""Fixtures for the project's own tests."""

pytest_plugins = ["pytester"]
