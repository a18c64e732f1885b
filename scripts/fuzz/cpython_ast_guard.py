"""Loaded by schemathesis as its hooks module (SCHEMATHESIS_HOOKS, set by run.sh).

Hypothesis describes the lambdas in its strategies by parsing their source with `ast.parse`, for
display only. CPython 3.11 (this machine's Python) can fail that parse with
"SystemError: AST constructor recursion depth mismatch" (python/cpython#106905, fixed in later
releases), and Hypothesis then reports a "Runtime Error" for whatever operation was being fuzzed:
a failure of the fuzzing tool, not a finding about the product, and one CI run was lost to it.

This guard answers such a description as Hypothesis itself does when it cannot parse a lambda
("lambda x: <unknown>"). Nothing else changes: every check, every request and every failure the
product causes is reported as before.
"""

import inspect

from hypothesis.internal import lambda_sources

_describe = lambda_sources._lambda_description


def _describe_despite_cpython_ast_bug(f, *args, **kwargs):
    try:
        return _describe(f, *args, **kwargs)
    except SystemError as error:
        if "AST constructor recursion depth mismatch" not in str(error):
            raise
        params = str(inspect.signature(f))[1:-1]
        return f"lambda {params}: <unknown>" if params else "lambda: <unknown>"


lambda_sources._lambda_description = _describe_despite_cpython_ast_bug
