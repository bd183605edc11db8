# NS-2 model of the TAROC draft's Appendix B topology, scheme NONE (no header compression):
#
#   fixed host --8 Mbit/s, 100 ms-- router --wireless: BW, 100 ms, BER-- mobile host
#
# One bulk FTP transfer over a TCP agent (Tahoe = Agent/TCP, Reno, Sack1) from the fixed host to
# the mobile host, maximum window 20 segments, for DURATION simulated seconds. Prints one line:
#   goodput_bytes_per_s=G packets=P timeouts=T retransmits=R
# where G is the payload (MSS = MTU - 40 bytes per segment) delivered in order to the sink per
# simulated second, as taroc's simulator counts it.
#
# usage: ns appendix-b.tcl KBPS BER MTU tahoe|reno|sack SEED [DURATION [NAME=VALUE]...]
# Each NAME=VALUE sets one more variable of the TCP agent (e.g. rfc2988_=false), after ours.
#
# Settings that differ from ns-2.35's defaults are set to what taroc's built-in scenario uses
# (crates/sim/src/scenario.rs), so that the comparison is of the TCP models themselves:
#   - initial window 1 segment (ns-2.35: 2; the draft's ns-2 of 2000: 1);
#   - RTO: initial 1 s, minimum 1 s, maximum 60 s (ns-2.35: 3 s, 0.2 s, 60 s), the backoff applied
#     before the floor (rfc2988_ false, as ns-2 did before RFC 2988 and the Appendix B scenarios
#     of taroc do, `rto_backoff = "ns2-classic"`); rfc2988_=true gives RFC 6298's order;
#   - no limited transmit (RFC 3042; ns-2.35's singledup_ 1 sends a new segment on each of the
#     first two duplicate ACKs; taroc's senders and the draft's ns-2 of 2000 do not);
#   - the router's DropTail limit 6 toward the mobile host (ns-2's DropTail refuses a packet
#     when length+1 >= limit, so this holds 5 waiting + 1 being sent, as in taroc's queue of 6
#     "counting the one in service"); other queues 50;
#   - bit errors on both wireless directions: every packet is lost with probability
#     1-(1-BER)^(8*size) (data 576 bytes at MTU 576, ACKs 40 bytes), drawn after it has been
#     transmitted and has crossed the link (link-lossmodel: a corrupted frame costs the link its
#     full transmission time, as in taroc's model).

if {$argc < 5} {
    puts stderr "usage: ns appendix-b.tcl KBPS BER MTU tahoe|reno|sack SEED \[DURATION \[NAME=VALUE\]...\]"
    exit 2
}
set kbps [lindex $argv 0]
set ber [lindex $argv 1]
set mtu [lindex $argv 2]
set tcpname [lindex $argv 3]
set seed [lindex $argv 4]
set duration [expr {$argc > 5 ? [lindex $argv 5] : 1000.0}]
set mss [expr {$mtu - 40}]

switch -- $tcpname {
    tahoe { set agent Agent/TCP; set sinkclass Agent/TCPSink }
    reno { set agent Agent/TCP/Reno; set sinkclass Agent/TCPSink }
    sack { set agent Agent/TCP/Sack1; set sinkclass Agent/TCPSink/Sack1 }
    default { puts stderr "unknown TCP $tcpname (tahoe, reno or sack)"; exit 2 }
}

set ns [new Simulator]
# The seed drives every random stream; ns-2 seeds must be positive.
$defaultRNG seed [expr {$seed * 7919 + 1}]

set fixed [$ns node]
set router [$ns node]
set mobile [$ns node]
$ns duplex-link $fixed $router 8Mb 100ms DropTail
$ns duplex-link $router $mobile ${kbps}kb 100ms DropTail
$ns queue-limit $router $mobile 6

# Packet error rate of one packet of `bytes` bytes at this BER.
proc per {bytes} {
    global ber
    return [expr {1.0 - pow(1.0 - $ber, 8.0 * $bytes)}]
}
# An error model dropping whole packets with probability `rate`, with its own random stream.
proc lossmodel {rate} {
    set rng [new RNG]
    $rng next-substream
    set u [new RandomVariable/Uniform]
    $u use-rng $rng
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $rate
    $em ranvar $u
    $em drop-target [new Agent/Null]
    return $em
}
$ns link-lossmodel [lossmodel [per $mtu]] $router $mobile
$ns link-lossmodel [lossmodel [per 40]] $mobile $router

set tcp [new $agent]
$tcp set window_ 20
$tcp set windowInit_ 1
$tcp set packetSize_ $mss
$tcp set rtxcur_init_ 1.0
$tcp set minrto_ 1.0
$tcp set maxrto_ 60
$tcp set singledup_ 0
$tcp set rfc2988_ false
foreach setting [lrange $argv 6 end] {
    set eq [string first = $setting]
    if {$eq < 1} {
        puts stderr "expected NAME=VALUE, not $setting"
        exit 2
    }
    $tcp set [string range $setting 0 [expr {$eq - 1}]] [string range $setting [expr {$eq + 1}] end]
}
set sink [new $sinkclass]
$ns attach-agent $fixed $tcp
$ns attach-agent $mobile $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp

proc finish {} {
    global tcp sink mss duration mtu
    # The sink's bytes_ counts the wire size (MSS + 40) of every segment it delivered in order.
    set segments [expr {[$sink set bytes_] / ($mss + 40)}]
    puts [format "goodput_bytes_per_s=%.1f packets=%d timeouts=%d retransmits=%d" \
        [expr {$segments * $mss / $duration}] [$tcp set ndatapack_] \
        [$tcp set nrexmit_] [$tcp set nrexmitpack_]]
    exit 0
}
$ns at 0.0 "$ftp start"
$ns at $duration "finish"
$ns run
