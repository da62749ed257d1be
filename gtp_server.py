"""Run kosumi as a GTP engine from the checkout: `python gtp_server.py --help`."""
from engine.gtp.main import main

if __name__ == "__main__":
    main()
