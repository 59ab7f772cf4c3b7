"""The `migrator` subcommands, a module each: its options (`register(subparsers)`) beside its entry (`run(args)`)."""
