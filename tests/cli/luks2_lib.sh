# SPDX-License-Identifier: BSD-2-Clause
# What the tests of geli reencrypt -t luks2 (t_luks2, t_luks2_disk,
# t_luks2_online) read a LUKS2 volume with: cryptsetup and Python's
# cryptography, not the project's code.  Sourced after lib.sh.
# need_luks2_tools [CMD WHY]: cryptsetup and Python's cryptography (and CMD,
# which WHY names, where given), else skipped.
need_luks2_tools() {
	command -v cryptsetup >/dev/null && python3 -c 'import cryptography' 2>/dev/null &&
		{ [ $# = 0 ] || command -v "$1" >/dev/null; } && return 0
	skip "needs cryptsetup (cryptsetup-bin) and Python's cryptography${2:+ and $2}"
	return 1
}
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
# converted NAME HDR KEYFILE S DESC: the checks on a converted provider.
converted() {
	local name=$1 hdr=$2 key=$3 S=$4 desc=$5 vk len
	len=$(stat -c %s "$T/$name.ref")
	check "$desc: cryptsetup reads the header (LUKS2, aes-xts-plain64, $S-byte sectors, data at 0)" \
		bash -c 'd=$(cryptsetup luksDump "$1"); grep -q "^Version:[[:space:]]*2$" <<<"$d" &&
			grep -q "cipher: aes-xts-plain64" <<<"$d" && grep -q "sector: $2 \[bytes\]" <<<"$d" &&
			grep -q "offset: 0 \[bytes\]" <<<"$d"' _ "$hdr" "$S"
	vk=$(volume_key "$hdr" "$key")
	check "$desc: the key material opens a keyslot, a 512-bit key" test ${#vk} = 128
	luks2_plain "$T/$name.img" "$vk" "$S" "$T/$name.got" "$len"
	check "$desc: decrypted by Python's AES-XTS, the .eli's bytes" cmp -s "$T/$name.got" "$T/$name.ref"
	check "$desc: zeros past them, GELI's record among them" \
		cmp -s <(tail -c +$((len + 1)) "$T/$name.img") <(head -c $(($(stat -c %s "$T/$name.img") - len)) /dev/zero)
	check "$desc: nothing of GELI left for geli dump or blkid" bash -c \
		'! "$1" dump "$2" >/dev/null 2>&1 && [ -z "$(blkid -p -o value -s TYPE "$2" 2>/dev/null)" ]' _ "$GELI" "$T/$name.img"
}
