"""The tasks of the TabArena-v0.1 suite: OpenML task id -> the dataset name and problem type TabArena knows it by.

TabArena 0.1.0 processes a run against its own bundled task table when every task id of the run
is in it (otherwise it asks OpenML for the missing ones), and then looks each task's results up
by dataset name: a result that names a known task id by another name stops its processing with a
``KeyError``. The table also fixes each task's problem type and metric, which every method's
``metric_error`` on the task is compared in; TabArena keeps the table's and publishes a result
scored otherwise beside the rest. These are facts from that table (51 tasks), kept here so the
native engine can refuse such a result before it is published.
"""

from __future__ import annotations

BIN, MULTI, REG = "binary", "multiclass", "regression"
#: the metric TabArena-v0.1 scores every task of a problem type with
METRIC = {BIN: "roc_auc", MULTI: "log_loss", REG: "rmse"}

#: task id -> (dataset name, problem type), as TabArena 0.1.0's bundled TabArena-v0.1 task metadata has them
TABARENA_V01 = {
    363612: ("airfoil_self_noise", REG),
    363613: ("Amazon_employee_access", BIN),
    363614: ("anneal", MULTI),
    363615: ("Another-Dataset-on-used-Fiat-500", REG),
    363616: ("APSFailure", BIN),
    363618: ("bank-marketing", BIN),
    363619: ("Bank_Customer_Churn", BIN),
    363620: ("Bioresponse", BIN),
    363621: ("blood-transfusion-service-center", BIN),
    363623: ("churn", BIN),
    363624: ("coil2000_insurance_policies", BIN),
    363625: ("concrete_compressive_strength", REG),
    363626: ("credit-g", BIN),
    363627: ("credit_card_clients_default", BIN),
    363628: ("customer_satisfaction_in_airline", BIN),
    363629: ("diabetes", BIN),
    363630: ("Diabetes130US", BIN),
    363631: ("diamonds", REG),
    363632: ("E-CommereShippingData", BIN),
    363671: ("Fitness_Club", BIN),
    363672: ("Food_Delivery_Time", REG),
    363673: ("GiveMeSomeCredit", BIN),
    363674: ("hazelnut-spread-contaminant-detection", BIN),
    363675: ("healthcare_insurance_expenses", REG),
    363676: ("heloc", BIN),
    363677: ("hiva_agnostic", MULTI),
    363678: ("houses", REG),
    363679: ("HR_Analytics_Job_Change_of_Data_Scientists", BIN),
    363681: ("in_vehicle_coupon_recommendation", BIN),
    363682: ("Is-this-a-good-customer", BIN),
    363683: ("kddcup09_appetency", BIN),
    363684: ("Marketing_Campaign", BIN),
    363685: ("maternal_health_risk", MULTI),
    363686: ("miami_housing", REG),
    363689: ("NATICUSdroid", BIN),
    363691: ("online_shoppers_intention", BIN),
    363693: ("physiochemical_protein", REG),
    363694: ("polish_companies_bankruptcy", BIN),
    363696: ("qsar-biodeg", BIN),
    363697: ("QSAR-TID-11", REG),
    363698: ("QSAR_fish_toxicity", REG),
    363699: ("SDSS17", MULTI),
    363700: ("seismic-bumps", BIN),
    363702: ("splice", MULTI),
    363704: ("students_dropout_and_academic_success", MULTI),
    363705: ("superconductivity", REG),
    363706: ("taiwanese_bankruptcy_prediction", BIN),
    363707: ("website_phishing", MULTI),
    363708: ("wine_quality", REG),
    363711: ("MIC", MULTI),
    363712: ("jm1", BIN),
}


def values_sql() -> str:
    """The table as a DuckDB ``VALUES`` list of ``(tid, name, problem_type, metric)`` rows."""
    return ", ".join(f"({tid}, '{name}', '{kind}', '{METRIC[kind]}')" for tid, (name, kind) in TABARENA_V01.items())
