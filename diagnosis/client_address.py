"""The address of the client a request comes from, the same for every lockout and limit
(django-axes' wrong passwords, /api/v1's refused tokens and calls without a token).

``REMOTE_ADDR`` is the socket's peer.  Only when that peer is one of ``TRUSTED_PROXIES``
(setting ``DJANGO_TRUSTED_PROXIES``: addresses or networks of this site's reverse proxies) is
``X-Forwarded-For`` read, from the right: each trusted proxy appends the address it was
called from, so the right-most address that is not a trusted proxy is the client; what a
client writes into the header itself sits to the left of it and is never taken.  Without
trusted proxies the header is ignored, so nobody can pose as another address.
"""

from __future__ import annotations

import functools
import ipaddress

from django.conf import settings
from django.http import HttpRequest

__all__ = ["client_address"]


@functools.cache
def _networks(configured: tuple[str, ...]) -> tuple[ipaddress._BaseNetwork, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in configured)


def _trusted(address: str, networks) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_address(request: HttpRequest) -> str | None:
    """The client's address: ``REMOTE_ADDR``, or behind trusted proxies the right-most
    untrusted address of ``X-Forwarded-For``; None when the request has no peer at all (a
    request made in code), as django-axes expects."""
    peer = request.META.get("REMOTE_ADDR") or None
    networks = _networks(tuple(settings.TRUSTED_PROXIES))
    if peer is None or not networks or not _trusted(peer, networks):
        return peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return peer  # a damaged header: the proxy's own address, not a made-up one
        if not _trusted(hop, networks):
            return hop
    return hops[0] if hops else peer  # every hop is a proxy of ours
