"""An example evalrun plugin (tests/test_plugins.py installs it): each module adds one extension."""
