#!/bin/sh
# The Python client's methods and models as JSON (see python_surface.py). Run from the
# repository root.
set -e
PYTHONPATH=clients/python/src PYTHONDONTWRITEBYTECODE=1 exec python3 test/support/client-surface/python_surface.py
