"""The tally of a Python test script's checks (testsuite/bench/test_*.py):

    from tally import check, summary
    check(cond, "what was expected")     # prints "FAIL: what..." when cond is false
    sys.exit(summary())                  # prints "N checks, M failed"; 1 if any failed
"""
checks = 0
failures = 0


def check(cond, what):
    global checks, failures
    checks += 1
    if not cond:
        failures += 1
        print(f"FAIL: {what}")


def summary():
    print(f"{checks} checks, {failures} failed")
    return 1 if failures else 0
