"""`python -m bot …` runs `rtcbot …`."""

from bot.entry import main

main()
