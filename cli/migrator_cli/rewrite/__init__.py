"""`migrator rewrite`: the site's embeds and links pointed at the migrated videos (model.py has the map of it)."""
