"""Mutually authenticated TLS 1.3 for ppml's links: identities, authorities and pinned trust.

Every party that opens links has an `Identity`: an ECDSA P-256 private key made in its own
process (it never leaves it, never travels as an argument) and a certificate whose one DNS name
is the party's name (``party-0``, ``dealer``, ``controller``...).  A peer is accepted only when
all of these hold (`Trust`):

* its certificate chains to an authority this party trusts (the federation's CA of
  ``peers.yaml``, or in the one-cluster modes the peers' own self-signed certificates);
* it is valid now (not expired, not yet valid);
* its name is the name this party expects at that end of the link;
* its SHA-256 fingerprint is the one pinned for that name, when one is pinned.

`Authority` is a certificate authority for one federation (``jobs.federated_local`` makes a
fresh one per run; a deployment uses its own).  TLS 1.3 only, no session tickets, no resumption:
each link is one full handshake with fresh ephemeral keys (forward secrecy).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import os
import re
import ssl
import tempfile

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NAME = re.compile(r"[a-z][a-z0-9-]{0,62}")
"""A party's name: a DNS label (it is the certificate's one DNS name)."""
DEFAULT_DAYS = 30
"""How long an issued certificate is valid."""
_SKEW = dt.timedelta(minutes=5)
"""Certificates are valid from a little before they are made: clocks of two machines differ."""


def check_name(name: str) -> str:
    """``name`` when it is a valid party name, else ValueError naming the rule."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"a party name must be a DNS label (lowercase letter, then letters, "
                         f"digits or '-', at most 63 characters), got {name!r}")
    return name


def fingerprint(certificate_pem: bytes) -> str:
    """The SHA-256 fingerprint (hex) of a PEM certificate: what `Trust` pins."""
    der = x509.load_pem_x509_certificate(certificate_pem).public_bytes(serialization.Encoding.DER)
    return hashlib.sha256(der).hexdigest()


def certificate_name(certificate_pem: bytes) -> str:
    """The one DNS name of a certificate (its party name)."""
    try:
        cert = x509.load_pem_x509_certificate(certificate_pem)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        (name,) = names.get_values_for_type(x509.DNSName)
    except (ValueError, x509.ExtensionNotFound):
        raise ValueError("a party's certificate must carry exactly one DNS name") from None
    return name


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _build(subject: str, issuer: str, public_key, signer, not_before: dt.datetime, days: float,
           ca: bool, san: str | None) -> x509.Certificate:
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
               .public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(not_before)
               .not_valid_after(not_before + _SKEW + dt.timedelta(days=days))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None),
                              critical=True))
    if san is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]),
                                        critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
    return builder.sign(signer, hashes.SHA256())


def write_private_key(path: str, key, password: bytes | None = None) -> None:
    """Write a private key readable by its owner only (created so, never widened), encrypted
    under ``password`` if given."""
    if os.path.exists(path):
        os.unlink(path)
    protection = serialization.NoEncryption() if password is None else \
        serialization.BestAvailableEncryption(password)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  protection))


class Authority:
    """A certificate authority: its key stays in this object; `issue` signs parties' requests."""

    def __init__(self, common_name: str = "ppml federation CA", days: float = DEFAULT_DAYS):
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.certificate = _pem(_build(common_name, common_name, self._key.public_key(),
                                       self._key, _now() - _SKEW, days, True, None))

    def save(self, directory: str) -> tuple:
        """(certificate path, key path) in ``directory``, the key readable by its owner only:
        for an authority that signs again later (a party's Ray cluster, `jobs.ray_tls`)."""
        cert_path = os.path.join(directory, "authority.crt")
        key_path = os.path.join(directory, "authority.key")
        with open(cert_path, "wb") as f:
            f.write(self.certificate)
        write_private_key(key_path, self._key)
        return cert_path, key_path

    @classmethod
    def load(cls, directory: str) -> "Authority":
        """The authority `save` wrote in ``directory``."""
        authority = cls.__new__(cls)
        with open(os.path.join(directory, "authority.key"), "rb") as f:
            authority._key = serialization.load_pem_private_key(f.read(), password=None)
        with open(os.path.join(directory, "authority.crt"), "rb") as f:
            authority.certificate = f.read()
        return authority

    def issue_host(self, public_key, names: list, addresses: list,
                   days: float = DEFAULT_DAYS) -> bytes:
        """A certificate for a machine (Ray's own TLS inside a party's cluster): its DNS
        ``names`` and IP ``addresses`` as subject alternative names."""
        issuer = x509.load_pem_x509_certificate(self.certificate).subject
        alternative = [x509.DNSName(n) for n in names] + \
            [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
                .issuer_name(issuer)
                .public_key(public_key)
                .serial_number(x509.random_serial_number())
                .not_valid_before(_now() - _SKEW)
                .not_valid_after(_now() + dt.timedelta(days=days))
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                      ExtendedKeyUsageOID.CLIENT_AUTH]),
                               critical=False)
                .sign(self._key, hashes.SHA256()))
        return _pem(cert)

    def issue(self, request_pem: bytes, days: float = DEFAULT_DAYS,
              not_before: dt.datetime | None = None) -> bytes:
        """The certificate of a party's request (`Identity.request`), valid ``days`` days from
        ``not_before`` (now by default); the request's signature and name are checked."""
        request = x509.load_pem_x509_csr(request_pem)
        if not request.is_signature_valid:
            raise ValueError("the certificate request's signature is not valid")
        name = check_name(request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)
        issuer = x509.load_pem_x509_certificate(self.certificate).subject
        cert = _build(name, issuer.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value,
                      request.public_key(), self._key,
                      (not_before or _now()) - _SKEW, days, False, name)
        return _pem(cert)


class Identity:
    """A party's TLS identity: its own private key (made here), its certificate, once
    installed, and the name both carry."""

    def __init__(self, name: str):
        self.name = check_name(name)
        self._key = ec.generate_private_key(ec.SECP256R1())
        self.certificate: bytes | None = None

    @classmethod
    def self_signed(cls, name: str, days: float = DEFAULT_DAYS) -> "Identity":
        """An identity with a self-signed certificate (not a CA: it can sign nothing else): for
        the one-cluster modes, where each peer trusts exactly the certificates it was handed
        (`Trust.pinned`)."""
        identity = cls(name)
        identity.certificate = _pem(_build(name, name, identity._key.public_key(), identity._key,
                                           _now() - _SKEW, days, False, name))
        return identity

    @classmethod
    def load(cls, name: str, certificate_path: str, key_path: str) -> "Identity":
        """A party's identity from its files (``peers.yaml``'s deployment form)."""
        identity = cls.__new__(cls)
        identity.name = check_name(name)
        with open(key_path, "rb") as f:
            identity._key = serialization.load_pem_private_key(f.read(), password=None)
        with open(certificate_path, "rb") as f:
            identity.install(f.read())
        return identity

    def request(self) -> bytes:
        """A certificate signing request for this identity's name and key (public)."""
        return (x509.CertificateSigningRequestBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.name)]))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(self.name)]),
                               critical=False)
                .sign(self._key, hashes.SHA256())
                .public_bytes(serialization.Encoding.PEM))

    def install(self, certificate_pem: bytes) -> None:
        """Take the certificate an authority issued for this identity; refused when it names
        another party or certifies another key."""
        cert = x509.load_pem_x509_certificate(certificate_pem)
        if certificate_name(certificate_pem) != self.name:
            raise ValueError(f"the certificate names {certificate_name(certificate_pem)!r}, "
                             f"not this party ({self.name!r})")
        ours = self._key.public_key().public_bytes(serialization.Encoding.DER,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
        theirs = cert.public_key().public_bytes(serialization.Encoding.DER,
                                                serialization.PublicFormat.SubjectPublicKeyInfo)
        if ours != theirs:
            raise ValueError(f"the certificate for {self.name!r} certifies another key")
        self.certificate = certificate_pem

    def save(self, directory: str, password: bytes | None = None) -> tuple:
        """(certificate path, key path) written in ``directory``, the key readable by its owner
        only (and encrypted under ``password`` if given): for ``jobs.party`` to load."""
        cert_path = os.path.join(directory, f"{self.name}.crt")
        key_path = os.path.join(directory, f"{self.name}.key")
        with open(cert_path, "wb") as f:
            f.write(self.certificate)
        write_private_key(key_path, self._key, password)
        return cert_path, key_path

    def context(self, trust: "Trust", server: bool) -> ssl.SSLContext:
        """A TLS 1.3 context presenting this identity and requiring a peer that ``trust``
        accepts (names and pins are checked by `Trust.check` after the handshake)."""
        if self.certificate is None:
            raise RuntimeError(f"{self.name} has no certificate yet (install one first)")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.check_hostname = not server
        ctx.options |= ssl.OP_NO_TICKET
        if server:
            ctx.num_tickets = 0
        ctx.load_verify_locations(cadata=trust.authorities.decode())
        # ssl loads a key from a file only: encrypted under a password that stays in memory,
        # in a private directory removed at once
        password = os.urandom(32).hex().encode()
        with tempfile.TemporaryDirectory(prefix="ppml-tls-") as tmp:
            cert_path, key_path = self.save(tmp, password)
            ctx.load_cert_chain(cert_path, key_path, password=password)
        return ctx


def _self_signed_only(authorities: bytes) -> bool:
    """Whether every certificate in ``authorities`` (PEM) is a self-signed non-CA one."""
    certs = x509.load_pem_x509_certificates(authorities)
    return all(not c.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
               for c in certs)


class Trust:
    """Whom a party accepts: PEM ``authorities`` (one or more certificates) and, per expected
    peer name, the pinned fingerprint of its certificate (or None: any certificate of an
    authority that names it)."""

    def __init__(self, authorities: bytes, pins: dict):
        self.authorities = authorities
        self.pins = {check_name(name): pin for name, pin in pins.items()}
        if any(pin is None for pin in self.pins.values()) and \
                _self_signed_only(authorities):
            raise ValueError("a peer without a pinned certificate needs a certificate authority "
                             "to vouch for it, not self-signed certificates")

    @classmethod
    def pinned(cls, certificates: dict) -> "Trust":
        """Trust exactly these self-signed certificates (name -> PEM): the one-cluster modes."""
        for name, pem in certificates.items():
            if certificate_name(pem) != name:
                raise ValueError(f"the certificate given for {name!r} names "
                                 f"{certificate_name(pem)!r}")
        return cls(b"".join(certificates.values()),
                   {name: fingerprint(pem) for name, pem in certificates.items()})

    def check(self, expected: str | None, peer_der: bytes) -> str:
        """The peer's name after a handshake that verified its chain and dates: it must be
        ``expected`` (any trusted name when None) and match its pin.  ConnectionError names
        what is wrong."""
        pem = ssl.DER_cert_to_PEM_cert(peer_der).encode()
        try:
            name = certificate_name(pem)
        except ValueError as exc:
            raise ConnectionError(f"the peer's certificate is not a party's: {exc}") from None
        if expected is not None and name != expected:
            raise ConnectionError(f"expected {expected}, but the peer's certificate names "
                                  f"{name}")
        if name not in self.pins:
            raise ConnectionError(f"{name} is not a peer of this party")
        pin = self.pins[name]
        if pin is not None and fingerprint(pem) != pin:
            raise ConnectionError(f"{name}'s certificate is not the one pinned for it")
        return name
