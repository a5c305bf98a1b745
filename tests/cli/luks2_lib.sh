# SPDX-License-Identifier: BSD-2-Clause
# What the tests of geli reencrypt -t luks2 (t_luks2, t_luks2_disk) read a
# LUKS2 volume with: cryptsetup and Python's cryptography, not the
# project's code.  Sourced after lib.sh.
# luks2_plain DEV VKHEX S OUT LEN [AT]: LEN bytes of DEV's data (at byte
# AT of it, 0 by default) decrypted as LUKS2's aes-xts-plain64 of S-byte
# sectors with volume key VKHEX, into OUT.
luks2_plain() {
	python3 - "$@" <<'PY'
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
dev, vk, S, out, n = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
at = int(sys.argv[6]) if len(sys.argv) > 6 else 0
with open(dev, "rb") as f, open(out, "wb") as o:
    f.seek(at)
    for off in range(0, n, S):
        tweak = (off // 512).to_bytes(8, "little") + bytes(8)
        d = Cipher(algorithms.AES(vk), modes.XTS(tweak)).decryptor()
        o.write(d.update(f.read(S)) + d.finalize())
PY
}
# volume_key HDR KEYFILE: the volume key cryptsetup finds with KEYFILE's
# bytes (a passphrase: a file without its newline), in hex.
# (luksDump reads a header file or a device.)
volume_key() {
	cryptsetup luksDump --dump-volume-key --batch-mode --key-file "$2" "$1" 2>/dev/null |
		awk '/^MK dump:/ { f = 1; sub(/^MK dump:/, "") } f && /^[ \t]*([0-9a-f][0-9a-f] )+/ { print } /^[A-Z]/ && !/^MK dump/ { f = 0 }' |
		tr -d ' \t\n'
}
nonl() { local f=$T/$(basename "$1").raw; printf "%s" "$(head -n 1 "$1")" >"$f"; echo "$f"; }
