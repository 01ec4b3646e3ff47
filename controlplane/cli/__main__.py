from controlplane.cli import entry

entry()
