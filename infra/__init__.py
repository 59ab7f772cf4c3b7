"""Local tooling: the provider simulator, the emulator, the local stack, the demo."""
