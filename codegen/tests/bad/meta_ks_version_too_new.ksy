meta:
  id: meta_ks_version_too_new
  ks-version: '0.12'
