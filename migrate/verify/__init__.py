"""mps-migrate verify: run a family's Metal kernel exactly as the MPS host would
(emulated kernel selection, CPU Metal backend) and compare with references.

    from migrate.verify.run import verify, Options
    report = verify(Path("~/pytorch"), "atan2", patch=(diff_text, "port.diff"))
    report.exit_code   # 0 pass, 1 mismatch

Inputs: generated cases per dtype x layout (cases.py) and, as layout ``opinfo``, the
installed torch's OpInfo samples of the family (opinfo_samples.py; ``Options(opinfo=False)``
or ``--no-opinfo`` skips them).  The report counts both: ``report.totals(opinfo=...)``.

Dtype coverage (run.coverage, rules/verify.yaml ``coverage_groups``): a kernel that
registers float32/float16 but not bfloat16 while torch CPU supports bfloat16 FAILS (a
"coverage" cell), as does any input dtype registered before ``--patch`` and not after.
Other unregistered dtypes torch CPU accepts (complex, integers) are notes.

Half computed in half instead of opmath float is caught with the default tolerances
when the extra roundings overflow or underflow an intermediate (hypot: x*x above 255.9
or below 2^-12) or move the result by more than float16's rtol of 1e-3 (about 1 ULP);
a product rounded twice stays within 1 ULP and cannot be told apart, and for some ops
(xlogy) torch CPU itself rounds each half operation, so there is nothing to tell apart.
The report's ``ulp`` column shows the remaining distance.
"""
