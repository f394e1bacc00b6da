from facestream.tools.cli import main

main()
