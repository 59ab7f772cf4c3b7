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
    "objects",  # S3's, GCS's and Azure's object URLs, and Bunny Stream's (a URL list's own: engine.py)
)

for _name in PLATFORMS:
    import_module(f"{__name__}.{_name}")
