"""Run kosumi as a GTP engine from the checkout: `python gtp_server.py --help`."""
from engine.gtp_main import main

if __name__ == "__main__":
    main()
