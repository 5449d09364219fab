"""An example evalrun plugin (tests/util/test_plugins.py installs it): each module adds one extension."""
