"""Loaded by schemathesis as its hooks module (SCHEMATHESIS_HOOKS, set by run.sh).

CPython 3.11 (this machine's Python) keeps the recursion depth of its AST constructor in state the
threads share, so two threads parsing source at once can fail with "SystemError: AST constructor
recursion depth mismatch" (python/cpython#106905, fixed in later releases). Schemathesis fuzzes with
several worker threads, and two things in them parse source:

- Hypothesis describes the lambdas in its strategies by parsing their source with `ast.parse`, for
  display only. One CI run was lost to it on the notifier.
- The first request imports schemathesis' transports lazily, and that import brings in `anyio`, whose
  lazy importer compiles its own `__init__.py` to an AST. Another CI run was lost to it on the read
  API: one worker's import failed with the mismatch and the other then found the module half made.

Both surface as a "Runtime Error" for whatever operation was being fuzzed: a failure of the fuzzing
tool, not a finding about the product. So this module imports the transports here, on the main thread
before any worker starts, and serializes the lambda descriptions, answering one that still fails as
Hypothesis itself does when it cannot parse a lambda ("lambda x: <unknown>"). Nothing else changes:
every check, every request and every failure the product causes is reported as before.
"""

import inspect
import threading

import schemathesis.transport.asgi  # noqa: F401  (see above: imported before the workers start)
import schemathesis.transport.requests  # noqa: F401
import schemathesis.transport.wsgi  # noqa: F401
from hypothesis.internal import lambda_sources

_describe = lambda_sources._lambda_description
_parsing = threading.Lock()


def _describe_despite_cpython_ast_bug(f, *args, **kwargs):
    try:
        with _parsing:
            return _describe(f, *args, **kwargs)
    except SystemError as error:
        if "AST constructor recursion depth mismatch" not in str(error):
            raise
        params = str(inspect.signature(f))[1:-1]
        return f"lambda {params}: <unknown>" if params else "lambda: <unknown>"


lambda_sources._lambda_description = _describe_despite_cpython_ast_bug
