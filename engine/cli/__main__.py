from kgp.cli import main

main()
