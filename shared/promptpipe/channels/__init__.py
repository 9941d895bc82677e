"""The channels' protocol: what arrives from Twilio and Meta and what goes back, pure functions of the request.

- ``parsing``: a Twilio form or a Meta payload as ``InboundMessage`` / ``DeliveryStatus``;
- ``signatures``: both providers' signature checks (Twilio's HMAC-SHA1, Meta's HMAC-SHA256) and
  Meta's verification handshake;
- ``context``: what a messenger needs to know about the participant to send well on their channel.
"""
