"""Each source platform's embed forms, a module a platform: importing this package registers them all (forms.py)."""

from importlib import import_module

PLATFORMS = (
    "vimeo",
    "wistia",
    "jwplayer",
    "brightcove",
    "kaltura",
    "mux",
    "cloudflare",
    "apivideo",
    "objects",  # Bunny's, S3's, GCS's, Azure's and Dropbox's object URLs, and a URL list's own URLs
)

for _name in PLATFORMS:
    try:
        import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as exc:  # a platform's module not written yet (while being built)
        if exc.name != f"{__name__}.{_name}":
            raise
