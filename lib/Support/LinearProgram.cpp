//===- LinearProgram.cpp - The one wrapper around GLPK --------------------===//

#include "weft/Support/LinearProgram.h"
#include "weft/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include <cmath>
#include <glpk.h>

using namespace weft;

/// Owns one glp_prob.
struct LinearProgram::Problem {
  glp_prob *lp = glp_create_prob();
  ~Problem() { glp_delete_prob(lp); }
};

LinearProgram::LinearProgram() = default;
LinearProgram::~LinearProgram() = default;

llvm::StringRef LinearProgram::toString(Status status) {
  switch (status) {
  case Status::Optimal:
    return "optimal";
  case Status::Infeasible:
    return "infeasible";
  case Status::Unbounded:
    return "unbounded";
  case Status::IterationLimit:
    return "iteration limit reached";
  case Status::Failed:
    return "solver failed";
  }
  return "unknown";
}

unsigned LinearProgram::addColumn(double lb, double ub, double obj) {
  colLb.push_back(lb);
  colUb.push_back(ub);
  colObj.push_back(obj);
  return colLb.size() - 1;
}

unsigned
LinearProgram::addRow(llvm::ArrayRef<std::pair<unsigned, double>> coeffs,
                      double lb, double ub) {
  int row = rowLb.size() + 1;
  rowLb.push_back(lb);
  rowUb.push_back(ub);
  // GLPK rejects repeated columns in a row: merge them.
  std::vector<std::pair<unsigned, double>> merged(coeffs.begin(), coeffs.end());
  llvm::sort(merged,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  for (unsigned i = 0; i < merged.size();) {
    unsigned col = merged[i].first;
    double coef = 0;
    for (; i < merged.size() && merged[i].first == col; ++i)
      coef += merged[i].second;
    if (coef == 0)
      continue;
    entryRow.push_back(row);
    entryCol.push_back(col + 1);
    entryValue.push_back(coef);
  }
  return row - 1;
}

static int boundKind(double lb, double ub) {
  bool hasLb = std::isfinite(lb), hasUb = std::isfinite(ub);
  if (hasLb && hasUb)
    return lb == ub ? GLP_FX : GLP_DB;
  if (hasLb)
    return GLP_LO;
  return hasUb ? GLP_UP : GLP_FR;
}

static double finiteOr0(double x) { return std::isfinite(x) ? x : 0; }

/// Maps GLPK's outcome of one simplex run to a status.
static LinearProgram::Status outcome(glp_prob *p, int ret) {
  using Status = LinearProgram::Status;
  if (ret == GLP_ENOPFS)
    return Status::Infeasible;
  if (ret == GLP_ENODFS)
    return Status::Unbounded;
  if (ret == GLP_EITLIM)
    return Status::IterationLimit;
  if (ret != 0)
    return Status::Failed;
  switch (glp_get_status(p)) {
  case GLP_OPT:
    return Status::Optimal;
  case GLP_NOFEAS:
    return Status::Infeasible;
  case GLP_UNBND:
    return Status::Unbounded;
  default:
    return Status::Failed;
  }
}

LinearProgram::Status LinearProgram::solve(Sense sense, int iterationLimit) {
  glp_term_out(GLP_OFF);
  lp = std::make_unique<Problem>();
  glp_prob *p = lp->lp;
  glp_set_obj_dir(p, sense == Sense::Minimize ? GLP_MIN : GLP_MAX);
  if (!rowLb.empty())
    glp_add_rows(p, rowLb.size());
  if (!colLb.empty())
    glp_add_cols(p, colLb.size());
  for (unsigned r = 0; r < rowLb.size(); ++r)
    glp_set_row_bnds(p, r + 1, boundKind(rowLb[r], rowUb[r]),
                     finiteOr0(rowLb[r]), finiteOr0(rowUb[r]));
  for (unsigned c = 0; c < colLb.size(); ++c) {
    glp_set_col_bnds(p, c + 1, boundKind(colLb[c], colUb[c]),
                     finiteOr0(colLb[c]), finiteOr0(colUb[c]));
    glp_set_obj_coef(p, c + 1, colObj[c]);
  }
  // GLPK arrays are 1-based: element 0 is ignored.
  std::vector<int> ia(1, 0), ja(1, 0);
  std::vector<double> ar(1, 0);
  ia.insert(ia.end(), entryRow.begin(), entryRow.end());
  ja.insert(ja.end(), entryCol.begin(), entryCol.end());
  ar.insert(ar.end(), entryValue.begin(), entryValue.end());
  glp_load_matrix(p, entryValue.size(), ia.data(), ja.data(), ar.data());
  glp_scale_prob(p, GLP_SF_AUTO);

  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.it_lim = iterationLimit;
  params.presolve = GLP_ON;
  int ret = glp_simplex(p, &params);
  Status status = outcome(p, ret);
  if (status == Status::Failed || ret == GLP_ENOPFS) {
    // Presolve can fail numerically on large LPs, and its infeasibility
    // verdict is not final: a ratio LP with a known feasible point was
    // declared infeasible by presolve and by the primal simplex from an
    // advanced basis, and solved from the standard basis. Retry without
    // presolve from an advanced basis, then from the standard basis with
    // the primal and with the dual simplex; infeasible only when all say so.
    params.presolve = GLP_OFF;
    glp_adv_basis(p, 0);
    status = outcome(p, glp_simplex(p, &params));
    for (int method : {GLP_PRIMAL, GLP_DUALP}) {
      if (status != Status::Failed && status != Status::Infeasible)
        break;
      params.meth = method;
      glp_std_basis(p);
      status = outcome(p, glp_simplex(p, &params));
    }
  }
  if (status != Status::Optimal)
    return status;
  values.resize(colLb.size());
  for (unsigned c = 0; c < colLb.size(); ++c)
    values[c] = glp_get_col_prim(p, c + 1);
  objectiveValue = glp_get_obj_val(p);
  return Status::Optimal;
}

llvm::Expected<std::vector<double>> LinearProgram::optimum(Sense sense,
                                                           int iterationLimit) {
  Status status = solve(sense, iterationLimit);
  if (status != Status::Optimal)
    return makeError(ExitInternal,
                     "GLPK found no optimum of an LP with {0} "
                     "rows and {1} columns: {2}",
                     numRows(), numColumns(), toString(status));
  return values;
}
