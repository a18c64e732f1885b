"""The package under test is an installed one (a wheel, an sdist, or ./sdks/python installed into the
test environment), never the source tree: what the tests pass is what a user gets."""

from __future__ import annotations

import os
import sys
from importlib.metadata import distribution
from pathlib import Path

import resilience_score


def test_the_package_is_imported_from_the_environment_it_was_installed_into() -> None:
    imported = Path(resilience_score.__file__).resolve()
    installed = distribution("resilience-score")

    assert imported.is_relative_to(Path(sys.prefix).resolve())
    assert Path(str(installed.locate_file("resilience_score/__init__.py"))).resolve() == imported
    assert installed.version == resilience_score.__version__
    expected = os.environ.get("RSD_PYTHON_SDK_ARTIFACT")
    if expected:
        # The run names the artifact it installed: its file name carries the version.
        assert f"-{installed.version}" in expected
        assert (Path(str(installed.locate_file("resilience_score/py.typed")))).is_file()
