"""Writing what authoring made: output folders, appending to suites, YAML text, --save-failures."""
