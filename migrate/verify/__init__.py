"""mps-migrate verify: run a family's Metal kernel exactly as the MPS host would
(emulated kernel selection, CPU Metal backend) and compare with references.

    from migrate.verify.run import verify, Options
    report = verify(Path("~/pytorch"), "atan2", patch=(diff_text, "port.diff"))
    report.exit_code   # 0 pass, 1 mismatch
"""
