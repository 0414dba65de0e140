//===- LinearProgram.cpp - A small GLPK wrapper --------------------------===//

#include "LinearProgram.h"
#include "weft/Support/Error.h"
#include <cmath>
#include <glpk.h>

using namespace weft;
using namespace weft::sched;

unsigned LinearProgram::addVariable(double lb, double ub, double obj) {
  colLb.push_back(lb);
  colUb.push_back(ub);
  colObj.push_back(obj);
  return colLb.size() - 1;
}

void LinearProgram::addRow(llvm::ArrayRef<std::pair<unsigned, double>> coeffs,
                           double lb, double ub) {
  int row = rowLb.size() + 1;
  rowLb.push_back(lb);
  rowUb.push_back(ub);
  for (const auto &[col, value] : coeffs) {
    entryRow.push_back(row);
    entryCol.push_back(col + 1);
    entryValue.push_back(value);
  }
}

static int boundKind(double lb, double ub) {
  bool hasLb = std::isfinite(lb), hasUb = std::isfinite(ub);
  if (hasLb && hasUb)
    return lb == ub ? GLP_FX : GLP_DB;
  if (hasLb)
    return GLP_LO;
  return hasUb ? GLP_UP : GLP_FR;
}

llvm::Expected<std::vector<double>> LinearProgram::maximize() const {
  // GLPK prints to stdout unless told otherwise (scaling reports).
  glp_term_out(GLP_OFF);
  glp_prob *lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  if (!rowLb.empty())
    glp_add_rows(lp, rowLb.size());
  if (!colLb.empty())
    glp_add_cols(lp, colLb.size());
  for (unsigned r = 0; r < rowLb.size(); ++r)
    glp_set_row_bnds(lp, r + 1, boundKind(rowLb[r], rowUb[r]),
                     std::isfinite(rowLb[r]) ? rowLb[r] : 0,
                     std::isfinite(rowUb[r]) ? rowUb[r] : 0);
  for (unsigned c = 0; c < colLb.size(); ++c) {
    glp_set_col_bnds(lp, c + 1, boundKind(colLb[c], colUb[c]),
                     std::isfinite(colLb[c]) ? colLb[c] : 0,
                     std::isfinite(colUb[c]) ? colUb[c] : 0);
    glp_set_obj_coef(lp, c + 1, colObj[c]);
  }
  // GLPK arrays are 1-based.
  std::vector<int> ia(1, 0), ja(1, 0);
  std::vector<double> ar(1, 0);
  ia.insert(ia.end(), entryRow.begin(), entryRow.end());
  ja.insert(ja.end(), entryCol.begin(), entryCol.end());
  ar.insert(ar.end(), entryValue.begin(), entryValue.end());
  glp_load_matrix(lp, entryValue.size(), ia.data(), ja.data(), ar.data());
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_ON;
  int ret = glp_simplex(lp, &params);
  int status = glp_get_status(lp);
  if (ret != 0 || status != GLP_OPT) {
    // Presolve can fail numerically on large LPs: retry from an advanced
    // basis without it, with the dual simplex as a fallback.
    glp_adv_basis(lp, 0);
    params.presolve = GLP_OFF;
    ret = glp_simplex(lp, &params);
    status = glp_get_status(lp);
    if (ret != 0 || status != GLP_OPT) {
      params.meth = GLP_DUALP;
      glp_std_basis(lp);
      ret = glp_simplex(lp, &params);
      status = glp_get_status(lp);
    }
  }
  if (ret != 0 || status != GLP_OPT) {
    glp_delete_prob(lp);
    return makeError(ExitInternal,
                     "GLPK failed on an LP with {0} rows and {1} "
                     "columns (code {2}, status {3})",
                     rowLb.size(), colLb.size(), ret, status);
  }
  std::vector<double> values(colLb.size());
  for (unsigned c = 0; c < colLb.size(); ++c)
    values[c] = glp_get_col_prim(lp, c + 1);
  glp_delete_prob(lp);
  return values;
}
