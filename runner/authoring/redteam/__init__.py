"""Red teaming: the attack catalogue (`evalrun redteam list`) and attack suites planned from existing
cases (`evalrun redteam plan`). The planned suites are ordinary suites; what they plant and check is
decided by evalrun's run and checks (canaries, `no_leak`, `forbid_extra_calls`, `no_write_calls`, `refusal`)."""
