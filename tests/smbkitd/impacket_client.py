#!/usr/bin/python3
"""A third SMB client for smbkitd's tests: python3-impacket (Debian).

    impacket_client.py PORT USER PASSWORD ACTION [ARGS...]

Actions print one result per line and exit 0 unless the action itself
could not run:
  roundtrip SHARE NAME SIZE   write NAME (SIZE pseudo-random bytes), list
                              it, read it back; prints "ok" or "mismatch"
  open SHARE NAME             prints the NTSTATUS name of opening NAME
                              for reading ("STATUS_SUCCESS" when it opened)
  opens SHARE COUNT           opens COUNT new files, keeping them open;
                              prints how many opened, then the first error
  shares                      prints the share names NetShareEnumAll lists
  flood SHARE NAME COUNT LENGTH PID
                              sends COUNT READs of LENGTH bytes of NAME
                              in one write and reads none of the answers for
                              3 s; prints how much the resident memory
                              of process PID (the server) grew, in MiB,
                              then how many answers carried the data
                              once it reads them
  sd SHARE NAME               prints the owner and group SIDs of NAME's
                              security descriptor and one line per DACL
                              ACE (type, mask, SID), parsed by impacket
"""
import io
import os
import random
import sys
import time

from impacket.ldap.ldaptypes import SR_SECURITY_DESCRIPTOR
from impacket.smb3structs import FILE_READ_DATA, FILE_SHARE_READ, FILE_OPEN, READ_CONTROL, SMB2_0_INFO_SECURITY
from impacket.smb3structs import SMB2_ECHO, SMB2_READ, SMB2Echo, SMB2Read
from impacket.smbconnection import SMBConnection, SessionError


def connect(port, user, password):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port), timeout=30)
    c.login(user, password)
    return c


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


def status_name(e):
    try:
        return e.getErrorString()[0]
    except Exception:
        return "0x%08x" % e.getErrorCode()


def main():
    port, user, password, action = sys.argv[1:5]
    args = sys.argv[5:]
    c = connect(port, user, password)
    if action == "roundtrip":
        share, name, size = args[0], args[1], int(args[2])
        rnd = random.Random(size)
        data = bytes(rnd.getrandbits(8) for _ in range(size))
        c.putFile(share, name, io.BytesIO(data).read)
        names = [f.get_longname() for f in c.listPath(share, "*")]
        out = io.BytesIO()
        c.getFile(share, name, out.write)
        print("ok" if out.getvalue() == data and name in names else "mismatch")
    elif action == "open":
        share, name = args
        tid = c.connectTree(share)
        try:
            fid = c.openFile(tid, name, desiredAccess=FILE_READ_DATA, shareMode=FILE_SHARE_READ,
                             creationDisposition=FILE_OPEN)
            c.closeFile(tid, fid)
            print("STATUS_SUCCESS")
        except SessionError as e:
            print(status_name(e))
    elif action == "opens":
        share, count = args[0], int(args[1])
        tid = c.connectTree(share)
        opened = 0
        first_error = "none"
        for i in range(count):
            try:
                c.createFile(tid, "many_%05d.tmp" % i)
                opened += 1
            except SessionError as e:
                first_error = status_name(e)
                break
        print(opened)
        print(first_error)
    elif action == "flood":
        share, name, count, length, pid = args[0], args[1], int(args[2]), int(args[3]), int(args[4])
        tid = c.connectTree(share)
        fid = c.openFile(tid, name, desiredAccess=FILE_READ_DATA, shareMode=FILE_SHARE_READ,
                         creationDisposition=FILE_OPEN)
        s = c.getSMBServer()
        charge = 1 + (length - 1) // 65536
        # Credits for every READ first: ECHOs (each asks for 127) until
        # the server has granted them.
        granted = 0
        for _ in range(200):
            if granted >= count * charge:
                break
            packet = s.SMB_PACKET()
            packet["Command"] = SMB2_ECHO
            packet["Data"] = SMB2Echo()
            granted += s.recvSMB(s.sendSMB(packet))["CreditRequestResponse"] - 1
        base = rss_mib(pid)
        # Every READ in one write to the socket: the server receives them
        # all before it has answered any.
        nb = s._NetBIOSSession
        sock = nb._sock

        class Batch:
            data = bytearray()

            def sendall(self, b):
                self.data += b

        batch = Batch()
        nb._sock = batch
        for _ in range(count):
            packet = s.SMB_PACKET()
            packet["Command"] = SMB2_READ
            packet["TreeID"] = tid
            packet["CreditCharge"] = charge
            req = SMB2Read()
            req["Padding"] = 0x50
            req["FileID"] = fid
            req["Length"] = length
            req["Offset"] = 0
            packet["Data"] = req
            s.sendSMB(packet)
            # A multi-credit request takes CreditCharge MessageIds.
            s._Connection["SequenceWindow"] += charge - 1
        nb._sock = sock
        sock.sendall(bytes(batch.data))
        peak = base
        for _ in range(30):
            time.sleep(0.1)
            peak = max(peak, rss_mib(pid))
        # Then every answer is read: each a frame holding the data (Direct
        # TCP framing: a zero byte, then a 3-byte big-endian length).
        answered = 0
        buf = bytearray()
        sock.settimeout(30)
        try:
            while answered < count:
                while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[1:4], "big"):
                    n = int.from_bytes(buf[1:4], "big")
                    if n < length:
                        raise EOFError("an answer without the data")
                    del buf[:4 + n]
                    answered += 1
                if answered == count:
                    break
                more = sock.recv(4 << 20)
                if not more:
                    break
                buf += more
        except (OSError, EOFError):
            pass
        print(peak - base, answered)
        sys.stdout.flush()
        os._exit(0)
    elif action == "shares":
        for s in c.listShares():
            print(s["shi1_netname"][:-1])
    elif action == "sd":
        share, name = args
        tid = c.connectTree(share)
        fid = c.openFile(tid, name, desiredAccess=READ_CONTROL, shareMode=FILE_SHARE_READ,
                         creationDisposition=FILE_OPEN)
        # OWNER | GROUP | DACL (MS-SMB2 2.2.37 AdditionalInformation).
        blob = c.getSMBServer().queryInfo(tid, fid, infoType=SMB2_0_INFO_SECURITY, fileInfoClass=0,
                                          additionalInformation=7)
        c.closeFile(tid, fid)
        sd = SR_SECURITY_DESCRIPTOR(data=blob)
        print("owner", sd["OwnerSid"].formatCanonical())
        print("group", sd["GroupSid"].formatCanonical())
        for ace in sd["Dacl"].aces:
            print("ace", ace["AceType"], "0x%08x" % ace["Ace"]["Mask"]["Mask"], ace["Ace"]["Sid"].formatCanonical())
    else:
        sys.exit("unknown action " + action)
    c.logoff()


if __name__ == "__main__":
    main()
