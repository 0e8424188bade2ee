"""The xcplab service: persistent queue, scheduler, users and limits behind the web API."""
