"""Makes the ism package importable from the build tree (ISM_BUILD_DIR,
default build/) and the Python examples importable by name. With
ISM_TEST_INSTALLED=1 the tests import the installed ism instead (a wheel from
scripts/build-wheel.sh: docs/python.md)."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("ISM_BUILD_DIR", os.path.join(ROOT, "build"))
if os.environ.get("ISM_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(BUILD, "python_packages"))
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))

# The compile cache of the tests stays in the build tree, never in $HOME.
os.environ.setdefault("ISM_CACHE_DIR",
                      os.path.join(BUILD, "test", "ism-cache-python"))
