"""The pytest plugin (`python -m pytest -p torch_proxy`, which loads this module through torch_proxy's
`pytest_plugins`). It installs the proxy when pytest imports it: pytest imports `-p` plugins before it
loads any conftest.py, and a conftest that imports torch (a transformers checkout's root conftest
imports transformers) must already get mindtorch_v2."""
import os

from . import ENV_VAR, install

os.environ[ENV_VAR] = "1"  # processes the tests spawn get the proxy too (with the hook installed)
install()
