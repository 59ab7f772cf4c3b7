"""The operator's command-line tool, `migrator`: load, probe, status, report, retry, redrive, pause, resume."""
