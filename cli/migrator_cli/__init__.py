"""The operator's command-line tool, `migrator`: load, probe, status, report, retry, redrive, pause, resume,
reconcile, audit, doctor. It lives outside functions/ so that the Lambda package never carries it."""
