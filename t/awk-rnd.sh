# awk-rnd.sh - sourced by test-lib.sh: awk's random numbers the same in every
# awk.
#
# The tests draw their data with awk's srand(N) and rand(), whose numbers
# differ between awks, and Ubuntu 24.04's mawk (1.3.4 20240123, the GPU
# machines') ignores srand(N): its data differed from run to run (a candidate
# list one run drew broke t3121's assumption).  This awk function rewrites a
# program that calls rand(): srand(N) seeds, and rand() draws from, a
# Park-Miller generator in awk's doubles (exact: products below 2^53), so
# every awk makes the same data (the seed mixed and the first draws skipped: a
# small seed's first numbers are small), a program without srand seeded with 0.
# Programs read with -f are left alone (none calls rand()).
awk() {
	local a=() p
	while [ $# -gt 0 ]; do
		case $1 in
		-f) command awk "${a[@]}" "$@"; return ;;
		--) a+=("$1"); shift; break ;;
		-F|-v) a+=("$1" "$2"); shift 2 ;;
		-?*) a+=("$1"); shift ;;
		*) break ;;
		esac
	done
	p=$1
	shift
	case $p in
	*rand\(\)*)
		p=$(printf '%s' "$p" | sed 's/\bsrand(\([^()]*\))/sp_srnd_(\1)/g; s/\([^s_]\)rand()/\1sp_rnd_()/g; s/^rand()/sp_rnd_()/')
		p="function sp_rnd_() { if (!sp_rnd_s_) sp_srnd_(0); sp_rnd_s_ = (sp_rnd_s_ * 16807) % 2147483647; return sp_rnd_s_ / 2147483647 }
function sp_srnd_(n,  i) { sp_rnd_s_ = (int(n) * 69069 + 12345) % 2147483646 + 1; for (i = 0; i < 8; i++) sp_rnd_s_ = (sp_rnd_s_ * 16807) % 2147483647 }
$p" ;;
	esac
	command awk "${a[@]}" "$p" "$@"
}
