meta:
  id: meta_ks_version_unquoted_float
  ks-version: 0.10
