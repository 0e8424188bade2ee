"""Run archives: manifest.json (hashes, versions, machine) and the sealed .tar.gz."""
