"""Imports, over and over: stdlib modules taken out of sys.modules and imported
again, so most samples are in a module's body or a class body, code objects
freed as each body ends (tests/integration/run.py test_imports)."""
import importlib
import sys
import time

MODULES = ["json.decoder", "json.encoder", "json", "textwrap", "string", "shlex", "csv", "pprint",
           "difflib", "fractions", "calendar", "configparser", "argparse", "dataclasses",
           "email.message", "http.client", "zipfile", "tarfile", "gettext", "ipaddress"]

end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
rounds = 0
while time.time() < end:
    for name in MODULES:
        sys.modules.pop(name, None)
        importlib.import_module(name)
    rounds += 1
print("rounds", rounds, file=sys.stderr)
