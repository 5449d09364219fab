"""`evalrun record`: conversations -> draft suites (draft rules, arguments, answers, annotation)."""
