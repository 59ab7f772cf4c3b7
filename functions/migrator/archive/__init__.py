"""Keep the masters (issue 43): each asset's original, copied to the owner's own S3 while its link still works.

`plan` lays the archive out and cuts a file into parts; `decide` says what follows each read and whether a
completed copy stands (both pure).
"""
