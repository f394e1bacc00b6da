from facestream.cli import main

main()
