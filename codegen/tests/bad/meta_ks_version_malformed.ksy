meta:
  id: meta_ks_version_malformed
  ks-version: 1.02
