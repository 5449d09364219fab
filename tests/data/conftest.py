"""tests/data holds projects the tests run on purpose. mutate/'s have an evalrun.yaml, which the evalrun pytest plugin
would collect as cases of evalrun's own test suite: pytest leaves them to the tests that use them."""
collect_ignore = ["mutate"]
