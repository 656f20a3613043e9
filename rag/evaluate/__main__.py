"""``python -m rag.evaluate --data DIR --submission FILE [--gold answers|labels|both]``."""
from . import main

raise SystemExit(main())
