// File: rank_name.h
// Layer: kairos_util. The rank a trace file's name carries (".rank<R>", TEAM interface 4),
// shared by the cross-rank analysis and `kairos merge` for traces without distributedInfo.
// Threading: pure function.
#ifndef KAIROS_SRC_RANK_NAME_H_
#define KAIROS_SRC_RANK_NAME_H_

#include <cstdint>
#include <string>

namespace kairos {

// The R of "rank<R>" (also "rank_<R>", "rank-<R>") at the start of the file name or after a
// non-alphanumeric character, in the last path component; -1 if none.
int64_t RankFromFileName(const std::string& path);

}  // namespace kairos

#endif  // KAIROS_SRC_RANK_NAME_H_
