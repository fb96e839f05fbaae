// This module's code is generated before each build by Plugins/BuildInfoPlugin
// (GeneratedBuildInfo.swift): the strong definitions of CQBBuildInfo's qb_build_commit and
// qb_build_dirty. No module imports it; the quantbench executable links it.
