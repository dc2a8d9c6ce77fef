"""The ``pytest11`` entry point: loaded by every pytest run of the environment, so it costs next to nothing.

It imports only pytest, the standard library and the option defaults, declares the options
(``options.py``) and decides whether the run is a certification.  Only then does it load the
harness plugin (``hooks.py``: markers, Hypothesis profiles, fixtures, collection, the end of
the run), registering it with pytest during configuration; a run that certifies nothing never
imports the harness, Hypothesis or jsonschema on the suite's account.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from asr_conformance.plugin.options import add_options
from asr_conformance.vocabulary.errors import UserError

#: The certification tests, collected when a run names an implementation.
CONFORMANCE_DIR = Path(__file__).resolve().parent.parent / "conformance"
#: The heavy plugin module, loaded only by a certification run.
HARNESS_PLUGIN = "asr_conformance.plugin.hooks"


def usage_error(error: UserError) -> pytest.UsageError:
    """pytest's usage error for a mistake the user can fix: the message as the error words it.

    The plugins catch ``UserError`` once per phase (set-up, parametrization, collection) and raise this."""
    return pytest.UsageError(f"asr-conformance: {error}")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Load and register the harness plugin for a certification run, and nothing at all in any other run.

    First among the plugins, so that the suite's Hypothesis profiles exist before Hypothesis' own
    plugin loads the one ``--hypothesis-profile`` names.  pytest replays ``pytest_configure`` (and the
    hooks that already ran) for a plugin registered now, so the harness plugin configures at once."""
    if not is_certification(config) or config.pluginmanager.has_plugin(HARNESS_PLUGIN):
        return
    config.pluginmanager.register(importlib.import_module(HARNESS_PLUGIN), HARNESS_PLUGIN)


def is_certification(config: pytest.Config) -> bool:
    """A run of the conformance suite (given an implementation, or pointed at it)."""
    if config.getoption("implementation") or checkout_without_configuration(config):
        return True
    for arg in config.args:
        where = Path(arg.split("::")[0]).resolve()
        if where == CONFORMANCE_DIR or CONFORMANCE_DIR in where.parents:
            return True
    return False


def checkout_without_configuration(config: pytest.Config) -> bool:
    """``pytest`` with no path, in the checkout, when pytest missed the checkout's configuration.

    pytest picks its rootdir before plugins load, so a value given to one of this plugin's options
    with a space (``--report-dir out``) reads to it as a path: the rootdir moves there, and the
    checkout's ``testpaths`` (the conformance suite) is lost.  The run means what it means with the
    configuration: certify the bundled reference."""
    return (config.args_source is pytest.Config.ArgsSource.INVOCATION_DIR and config.inipath is None
            and config.invocation_params.dir.resolve() == CONFORMANCE_DIR.parents[1])
